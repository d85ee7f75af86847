"""Small helpers with no file format and no domain: lazy exports, bounded concurrent jobs, progress bars,
how a message shows a long list, and which optional extra brings which package (extras)."""
