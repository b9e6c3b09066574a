"""The workspace explorer, the table browser with column profiles, and the knowledge panel."""
