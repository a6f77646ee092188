"""Pre-labelling jobs: their life (services), the two runners (realtime, batch), progress and lease, the LLM client, the job pages and their live feed."""
