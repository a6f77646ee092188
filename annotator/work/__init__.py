"""The annotation of a turn: assignment of slots, the one write path of annotations, the annotation screen and its background saving."""
