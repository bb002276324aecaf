"""hudi-ops' timetables (registered by its plugin, as Airflow requires of a custom timetable)."""
