"""shiftbench-notes: the worked example of docs/methods.md (`notes`, in `shiftbench_notes.notes`)."""
