"""The lab: the replay lab and what-if."""
