"""The reference's method interface, unchanged: `--methods slb:mypkg.notes:MyNotes`.

`adapter` turns a class of that interface's shape into a shiftbench method; `record` gives it the
reference's `EpisodeResult` and record text; `llm` a synchronous model client over the metered one.
"""

from methods.slb.adapter import ReferenceAdapter, reference_spec
from methods.slb.record import EpisodeResult, reference_record

__all__ = ["EpisodeResult", "ReferenceAdapter", "reference_record", "reference_spec"]
