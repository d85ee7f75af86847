"""Small helpers with no file format and no domain: lazy exports, bounded concurrent jobs, progress bars,
and how a message shows a long list."""
