"""Hugging Face Hub transfers: dataset and model downloads, checkpoint discovery, merging, model cards, uploads."""
