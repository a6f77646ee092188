from ...models import ImportBatch

from ._importing import ImportCommand


class Command(ImportCommand):
    help = "Import the project's JSONL format (docs/jsonl-format.md), the same schema export_gold writes."
    kind = ImportBatch.Kind.JSONL

    def add_file_arguments(self, parser):
        parser.add_argument("file", help="a .jsonl file, one turn per line")

    def files(self, options):
        return [options["file"]]
