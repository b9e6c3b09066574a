"""Updates of installed builds (Qt-free): the signed release feed, the download, the hand-off
to the platform's installer, and the weekly check's schedule.

The feed (``version_meta.json``) is described in ``packaging/README.md``; the flow is
:func:`lantide.update.check.check_for_update` then :func:`lantide.update.fetch.download_asset`
then :func:`lantide.update.install.install_update`.
"""
