"""The e-mail backend of the embedded default (no EMAIL_HOST): Django's file backend, with the
folder kept 0700 and every message file created 0600 (issue 28 §5) — the demo outbox holds an L3
decision's one-time codes and sign-in links, which no other account on the machine may read,
whatever the process's umask."""

from __future__ import annotations

import os
from typing import Any

from django.core.mail.backends import filebased

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600


class PrivateFileBackend(filebased.EmailBackend):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        os.chmod(str(getattr(self, "file_path")), DIRECTORY_MODE)  # noqa: B009 (set by the file backend, untyped)

    def open(self) -> bool:
        if self.stream is None:
            descriptor = os.open(self._get_filename(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
            os.fchmod(descriptor, FILE_MODE)  # also when the file was there already
            self.stream = os.fdopen(descriptor, "ab")
            return True
        return False
