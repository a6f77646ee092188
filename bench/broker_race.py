"""Messages lost by the filesystem broker: kombu's own transport against the project's (config/broker.py).

    .venv/bin/python bench/broker_race.py --rounds 5 --messages 3000

Each round and transport gets a fresh broker folder. Three producer processes start at once (each declares the
queue, so each binds it to the exchange, as the web server and a worker do on their first start) and put
``--messages`` messages between them; one consumer process polls without pause (a worker at ``polling_interval``
0) and acknowledges what it gets. The figures per round: messages received (each carries its producer and number,
so a message received twice counts once), the consumer's read errors (a message file read before it was
written: the message is gone), the producers that failed to start (an exchange table read before it was
written), and the files left. A loss-free transport receives every message with no error.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TRANSPORTS = {"kombu": "kombu.transport.filesystem:Transport", "project": "config.broker:Transport"}
PRODUCERS = 3


def options(folder: str) -> dict:
    from config.settings.base import filesystem_broker_options

    return filesystem_broker_options(Path(folder))


def produce(folder: str, transport: str, producer: int, count: int, started) -> None:
    from kombu import Connection

    started.wait()
    with Connection("filesystem://", transport=transport, transport_options=options(folder)) as connection:
        queue = connection.SimpleQueue("jobs")
        for number in range(count):
            queue.put({"producer": producer, "number": number})


def consume(folder: str, transport: str, expected: int, producers_done, result) -> None:
    from kombu import Connection

    received, errors = set(), 0
    deadline = time.monotonic() + 120
    with Connection("filesystem://", transport=transport,
                    transport_options={**options(folder), "polling_interval": 0}) as connection:
        queue = connection.SimpleQueue("jobs")
        while len(received) < expected and time.monotonic() < deadline:
            try:
                message = queue.get(timeout=0.5)
            except queue.Empty:
                if producers_done.is_set():
                    break
                continue
            except ValueError:  # the JSON of a file read before it was written: that message is gone
                errors += 1
                continue
            received.add((message.payload["producer"], message.payload["number"]))
            message.ack()
    result.put((len(received), errors))


def one_round(transport: str, messages: int) -> dict:
    folder = tempfile.mkdtemp(prefix="broker-race-")
    try:
        for name in ("data_folder_out", "data_folder_processed", "control_folder"):
            Path(options(folder)[name]).mkdir(parents=True, exist_ok=True)
        context = multiprocessing.get_context("spawn")
        started, producers_done, result = context.Event(), context.Event(), context.Queue()
        per_producer = messages // PRODUCERS
        consumer = context.Process(target=consume, args=(folder, transport, per_producer * PRODUCERS,
                                                         producers_done, result))
        consumer.start()
        producers = [context.Process(target=produce, args=(folder, transport, number, per_producer, started))
                     for number in range(PRODUCERS)]
        for producer in producers:
            producer.start()
        started.set()
        for producer in producers:
            producer.join()
        failed_producers = sum(1 for producer in producers if producer.exitcode != 0)
        producers_done.set()
        received, errors = result.get(timeout=180)
        consumer.join()
        left = len([p for p in Path(options(folder)["data_folder_out"]).iterdir() if p.name.endswith(".msg")])
        return {"sent": per_producer * (PRODUCERS - failed_producers), "received": received, "read_errors": errors,
                "producers_failed_to_start": failed_producers, "files_left": left}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--messages", type=int, default=3000, help="messages per round (split among 3 producers)")
    parser.add_argument("--transport", choices=sorted(TRANSPORTS), action="append",
                        help="which to run (default: both, alternately)")
    parser.add_argument("--json", help="also write the report here")
    args = parser.parse_args(argv)
    names = args.transport or ["kombu", "project"]
    rounds = {name: [] for name in names}
    for _ in range(args.rounds):
        for name in names:
            rounds[name].append(one_round(TRANSPORTS[name], args.messages))
    report = {"messages_per_round": args.messages, "rounds": rounds,
              "lost": {name: sum(r["sent"] - r["received"] for r in runs) for name, runs in rounds.items()},
              "producers_failed_to_start": {name: sum(r["producers_failed_to_start"] for r in runs)
                                            for name, runs in rounds.items()}}
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
