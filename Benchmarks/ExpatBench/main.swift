print("feedingest-bench: coming")
