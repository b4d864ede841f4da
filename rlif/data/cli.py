"""Command-line help that shows every option's default, shared by the data commands.

A user reading ``--help`` should see what happens when an option is left out. argparse's
``ArgumentDefaultsHelpFormatter`` does that but also prints ``(default: None)`` for options whose absence means
"not given" (their help says what happens then), and folds the description; this formatter skips those
defaults and keeps the description's line breaks (it holds examples).
"""

from __future__ import annotations

import argparse


class DefaultsHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Append ``(default: X)`` to an option's help unless the help already names it or X is None/False/SUPPRESS."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            "%(default)" in text
            or "default:" in text
            or default is None
            or default is False
            or default == argparse.SUPPRESS
            or not action.option_strings
        ):
            return action.help
        if isinstance(default, tuple | list) and all(isinstance(d, str) for d in default):
            default = ",".join(default)
        return f"{text} (default: {str(default).replace('%', '%%')})"
