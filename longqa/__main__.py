from longqa.cli import main

main()
