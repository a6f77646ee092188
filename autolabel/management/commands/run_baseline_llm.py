"""Serve the offline baseline LLM (an OpenAI-compatible HTTP server) until interrupted."""

from django.core.management.base import BaseCommand, CommandError

from autolabel.baseline.server import FAULT_KINDS, make_server, parse_fault


class Command(BaseCommand):
    help = (
        "Run the offline baseline LLM: an OpenAI-compatible server (chat completions with n, files, batches) "
        "answering with a lexical-overlap judge. A baseline, not a model: see docs/autolabel.md."
    )

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8765)
        parser.add_argument("--delay", type=float, default=0.0, help="Seconds to wait before each chat reply.")
        parser.add_argument(
            "--fault", action="append", default=[], metavar="KIND=every:N|first:N",
            help=f"Inject a fault on a schedule; KIND is one of {', '.join(FAULT_KINDS)}. Repeatable.",
        )
        parser.add_argument("--retry-after", type=float, default=1.0, help="Retry-After seconds sent with a 429.")
        parser.add_argument("--timeout-delay", type=float, default=30.0, help="How long a 'timeout' fault stalls.")
        parser.add_argument("--batch-delay", type=float, default=0.2, help="Seconds a batch stays 'validating'.")

    def handle(self, *args, **options):
        try:
            faults = dict(parse_fault(spec) for spec in options["fault"])
        except ValueError as error:
            raise CommandError(str(error)) from None
        try:
            server = make_server(
                options["host"], options["port"], delay=options["delay"], faults=faults,
                retry_after=options["retry_after"], timeout_delay=options["timeout_delay"],
                batch_delay=options["batch_delay"],
            )
        except OSError as error:
            raise CommandError(f"cannot listen on {options['host']}:{options['port']}: {error}") from None
        host, port = server.server_address[:2]
        self.stdout.write(f"Baseline LLM listening on http://{host}:{port}/v1 (delay {options['delay']}s, faults {faults or 'none'})")
        self.stdout.flush()
        try:
            server.serve_forever(poll_interval=0.2)
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
