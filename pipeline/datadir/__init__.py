"""The data folder: where each ruleset's files are (layout), their checksums (check), the database of views."""
