"""edge package."""
