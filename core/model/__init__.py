"""The model layer: messages, the session, policy, pricing and cost, the command stack."""
