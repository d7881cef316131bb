"""Reading game records: SGF files, folders and archives -> validated games.

Where to start reading: ``games`` (iter_games: any source -> Game records, with counted,
reported skips), ``sgf`` (one SGF text -> a Game, checked).
"""
