"""Every write of the tasks app: corpus import and storage, instance generation, characteristic builders,
screening questions (TSV import in STEL's format, duplicates to edit)."""
