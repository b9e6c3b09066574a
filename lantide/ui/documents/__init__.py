"""Plan and Report tabs: the Markdown editor and preview, annotations, agent edits and
changes made outside the app."""
