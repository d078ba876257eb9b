"""Agreement runs, filter runs and benchmark exports (issue: agreement and filtering)."""
