"""kombu's filesystem transport (the default broker of `make run`), with every file written whole before it is seen.

kombu's own transport (5.7) creates a message's file under its final name and only then writes the message into it,
and a worker takes any file with that name: a worker that polls in between moves the empty file away, fails to
decode it and the message is gone (celery/kombu#1551; here an import that stayed "pending" forever, and 14 of
15,000 messages lost in bench/broker_race.py). An exchange's binding table is created the same way, so a process
binding a queue while another creates the table reads it empty and fails.

Here a message is written to a name no reader lists and renamed into place (a rename within a folder is atomic), and
a new binding table is written whole and linked into place (a link fails if the table was created meanwhile: it is
then updated under its lock as kombu does). Messages sent within a millisecond keep their order. Readers are
kombu's, unchanged. config.settings.base selects this transport whenever the broker URL is ``filesystem://``.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic_ns

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


def write_whole(folder: str, name: str, data: bytes, *, replace: bool = True) -> bool:
    """Write ``data`` to ``folder/name`` so that no reader ever sees the file partly written.

    The bytes go to a hidden file of the same folder first (flushed to disk: a message is a job somebody asked
    for), then take the name: renamed over it, or, with ``replace=False``, linked to it only if the name is free.
    Returns False when ``replace=False`` and the name was taken (nothing written).
    """
    hidden = os.path.join(folder, f".{uuid.uuid4().hex}.writing")
    with open(hidden, "wb") as stream:  # no reader lists a hidden name: no lock needed while it is written
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())
    try:
        if replace:
            os.replace(hidden, os.path.join(folder, name))
            return True
        try:
            os.link(hidden, os.path.join(folder, name))
        except FileExistsError:
            return False
        return True
    finally:
        if os.path.exists(hidden):
            os.unlink(hidden)


class Channel(filesystem.Channel):
    """The filesystem channel whose messages and new binding tables appear only once written."""

    def _put(self, queue, payload, **kwargs):
        """Put ``payload`` onto ``queue``: the file kombu's ``_get`` lists appears whole.

        Named as kombu names it, but by the nanosecond (zero-padded) where kombu counts milliseconds: kombu's
        reader takes files in the order of their names, so messages sent within one millisecond keep their order.
        """
        name = f"{monotonic_ns():020d}_{uuid.uuid4()}.{queue}.msg"
        try:
            write_whole(self.data_folder_out, name, str_to_bytes(dumps(payload)))
        except OSError as exc:
            raise ChannelError(f"Cannot add file {name!r} to directory") from exc

    def _queue_bind(self, exchange, routing_key, pattern, queue):
        """Bind ``queue``: a new exchange's table is created whole; an existing one is updated under its lock."""
        table = self._exchange_file(exchange)
        self.control_folder.mkdir(exist_ok=True)
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        try:
            if write_whole(str(self.control_folder), table.name, str_to_bytes(dumps([entry])), replace=False):
                return
        except OSError as exc:
            raise ChannelError(f"Cannot open {table}") from exc
        super()._queue_bind(exchange, routing_key, pattern, queue)  # the table exists: kombu's locked update


class Transport(filesystem.Transport):
    """kombu's filesystem transport with ``Channel`` above (same options, same folders, same file names)."""

    Channel = Channel
