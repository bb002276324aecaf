"""Table services across a fleet of tables under one budget: which (table, service) runs next."""
