"""The audit trail's room: records of every verdict and decision, kept and read back.

It holds what a record is (:mod:`._records`), the strict reading of a record's JSON line, the
referee for every other reading (:mod:`._strict`), the stores that write records (JSON Lines
files, :mod:`._recorders`; PostgreSQL, :mod:`._postgres`) and the sources that read many files
or the database in time order (:mod:`._sources`). Its fast reading, which must give exactly what
the strict one gives at no more cost, is a folder of its own, :mod:`._fast`.

It may import the package's core modules, the person's room (:mod:`..._decide`, whose decisions
and receipts a record holds) and its own modules; never calibration, the faces or the CLI.
"""
