"""The learned judge: a classifier trained on a project's gold, in the project's protocol (docs/autolabel.md)."""
