"""Data tables that drive the configuration validators (parameters, versions, rules)."""
