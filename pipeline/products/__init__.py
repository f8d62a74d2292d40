"""What is made of built tablebases: probing, play, queries, claims, pages, the data card, a bundle to publish."""
