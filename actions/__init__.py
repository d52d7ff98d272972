"""Migration steps: plan, preview, confirm, apply, verify; resumable, reversible, audited. Never imports Textual."""
