"""The expense-itemization benchmark (issue 8): environment, receipts, agents, runner, metrics, reports."""
