"""The person's room: what a person reads and decides.

It holds the receipt of a check (:mod:`._receipts`) and its page with the decision form
(:mod:`._page`, :mod:`._form`), the person's typed decision (:mod:`._decisions`), the core-2
records a decision makes (:mod:`._records`), the step's state rules of profile section 3
(:mod:`._state`) and the self-contained checkpoint of an escalation (:mod:`._checkpoint`).

It may import the package's core modules (``checkprofile._*``, ``checkprofile.errors``) and its
own modules, nothing else: not the audit trail, not calibration, not the faces
(``checkprofile``, ``checkprofile.human``) nor the CLI. The rooms above it import it.
"""
