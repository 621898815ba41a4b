"""Features, models, training, evaluation and write-back of predicted relations."""
