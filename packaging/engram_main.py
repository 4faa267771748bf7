"""Entry point of the bundled app: the `engram` command (CLI and `engram tray`)."""

from ui.launcher import main

if __name__ == "__main__":
    main()
