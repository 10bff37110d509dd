"""The audit trail's fast reading: verdict and decision lines read by their layout.

A line a writer of this package wrote is read here with one regular expression per check (the
verdict's tail is read by code generated for that check, :mod:`._tail`); any other line, or one
past the bounds this reading keeps, goes to the strict reader (:mod:`.._strict`), which is its
referee: both must give the same record, and the tests compare them on generated trails. It
never costs more than the strict reading: a line over ``FAST_LINE`` (:mod:`._reader`), or a
verdict of a check past the ``LIMIT`` a reader learns (:mod:`._verdicts`), goes the strict way.

It may import the package's core modules, the person's room and the audit trail's records and
strict reader; never the stores or sources that use it, calibration, the faces or the CLI.
"""
