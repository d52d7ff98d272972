"""The core: cluster access, the fleet model, the DRA CEL environment, diagnosis. Never imports Textual."""
