# dmgbuild settings for Lantide's macOS disk image (the app and a link to Applications,
# to drag it onto). Built by packaging/build.py --target macos after the .app bundle:
#   dmgbuild -s packaging/macos/dmg_settings.py -D app=dist/Lantide.app \
#            "Lantide" dist/Lantide-VERSION.dmg
# dmgbuild executes this file with `defines` (the -D values) in its globals.
# ruff: noqa: F821  (defines is dmgbuild's)
import os.path

application = defines.get("app", "dist/Lantide.app")
appname = os.path.basename(application)

format = "UDZO"  # zlib-compressed, read-only
filesystem = "HFS+"
files = [application]
symlinks = {"Applications": "/Applications"}
badge_icon = None
icon_locations = {appname: (140, 160), "Applications": (420, 160)}
window_rect = ((200, 120), (560, 340))
default_view = "icon-view"
show_status_bar = False
show_tab_view = False
show_toolbar = False
show_pathbar = False
show_sidebar = False
icon_size = 96
