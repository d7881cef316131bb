"""Reading game records: SGF files, folders and archives -> validated games."""
