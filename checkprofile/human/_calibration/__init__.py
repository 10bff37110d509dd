"""Calibration's room: how well a check's answers agree with people's decisions.

It holds the join of verdicts with decisions or labels into cases (:mod:`._join`, with the
labels read by :mod:`._labels`), the columns a check's answers make (:mod:`._columns`), the
figures with their intervals (:mod:`._figures`), the threshold search (:mod:`._search`), the
Learn-then-Test recommendation (:mod:`._recommend`, with Holm over a grid for a check of two
questions in :mod:`._grid`), costs (:mod:`._cost`), drift between two
calibrations (:mod:`._drift`), the report (:mod:`._report`) and the entry point that reads a
trail and puts them together (:mod:`._calibrate`).

It may import the package's core modules, the audit trail's room (it reads the trail) and the
person's room, and its own modules; never the faces or the CLI. Nothing imports it but the
face ``checkprofile.human`` and the CLI.
"""
