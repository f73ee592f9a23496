from rooflab.cli import main

main()
