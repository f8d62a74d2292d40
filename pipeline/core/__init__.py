"""The domain every layer shares: errors, the value vocabulary, parameters and the dataset's schemas."""
