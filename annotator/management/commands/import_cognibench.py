from ...models import ImportBatch

from ._importing import ImportCommand


class Command(ImportCommand):
    help = (
        "Import the public CogniBench format: DIALOGUES.json and optionally LABELS.json. CogniBench's sentences "
        "are kept; labels become gold with provenance 'imported'; inconsistencies with the list fields are reported."
    )
    kind = ImportBatch.Kind.COGNIBENCH

    def add_file_arguments(self, parser):
        parser.add_argument("dialogues", help="CogniBench dialogues.json")
        parser.add_argument("labels", nargs="?", help="CogniBench labels.json (optional)")

    def files(self, options):
        return [options["dialogues"]] + ([options["labels"]] if options["labels"] else [])
