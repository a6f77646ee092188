"""A turn's units (sentences): flags, a lead's split and merge (services), what depends on a unit (dependents), their reads, forms and pages."""
