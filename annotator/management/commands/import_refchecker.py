from ...models import ImportBatch

from ._importing import ImportCommand


class Command(ImportCommand):
    help = "Import RefChecker human-annotation files: responses become turns, triplets keep their human label."
    kind = ImportBatch.Kind.REFCHECKER

    def add_file_arguments(self, parser):
        parser.add_argument("files", nargs="+", help="RefChecker *_answers.json files")

    def files(self, options):
        return options["files"]
