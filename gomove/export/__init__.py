"""Files other programs read, and their gammas read back.

Where to start reading: ``source`` (the dataset an export reads), ``mm_format``
(Coulom's mm competition and gamma files), ``models`` (mm's gammas imported as a
gomove model), ``pachi`` (Pachi's pattern files).
"""
