"""pipelines level."""
