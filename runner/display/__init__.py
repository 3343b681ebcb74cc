"""What a person watching a run sees: the live figures and the dashboard.

- `progress`: the run's live state (`RunProgress`, per stream `StreamProgress`), written by the engine
  and the client stack, read by the displays. Plain data: no rich here.
- `eta`: the run's ETA from what is left and each kind of work's recent pace.
- `figures`: the wording of each figure (spend, ETA, waits) shared by every display.
- `layout`: what fits on the terminal (the footer first; columns give way in order of importance).
- `live`: the displays (rich dashboard, plain log lines, none) behind one small interface.

Arrows: display -> providers (the waits it names), common.
"""
