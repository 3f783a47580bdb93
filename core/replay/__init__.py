"""The replay layer: strategies, the cache model, cost per request, what-if."""
