from twin.cli.app import main

main()
