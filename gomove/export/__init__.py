"""Files other programs read: Coulom's mm competition and gamma files, Pachi's pattern files."""
