"""Rules for ecosystems the corpus showed without one, row by row on synthetic lines:
each row is (rule, a paste, the same failure on another machine, another failure of that
tool). The two pastes of one failure share a strong signature; the other failure does not."""

from __future__ import annotations

import pytest

from poimen.signatures import extract

ROWS = [
    ("ruby-exception",
     "/home/ann/app/vendor/bundle/ruby/3.1.0/gems/activesupport-7.0.8/lib/active_support/"
     "logger.rb:12:in `<module:Foo>': uninitialized constant ActiveSupport::Foo::Logger (NameError)",
     "C:/Ruby32/lib/ruby/gems/3.2.0/gems/activesupport-7.0.4/lib/active_support/logger.rb:9:in "
     "`<top (required)>': uninitialized constant ActiveSupport::Foo::Logger (NameError)",
     "app/models/user.rb:3:in `<class:User>': undefined method `has_many' for User:Class "
     "(NoMethodError)"),
    ("rspec-failure",
     "  1) User saves\n     Failure/Error: User.create!(name: 'x')\n\n"
     "     ActiveRecord::StatementInvalid:\n       PG::UndefinedTable: ERROR:  relation "
     "\"users\" does not exist\n",
     "  3) Signup works\n     Failure/Error: post :create, params: {}\n\n"
     "     ActiveRecord::StatementInvalid:\n       PG::UndefinedTable: ERROR:  relation "
     "\"users\" does not exist\n",
     "  1) User saves\n     Failure/Error: User.create!(name: 'x')\n\n"
     "     ActiveRecord::RecordInvalid:\n       Validation failed: Email has already been taken\n"),
    ("ruby-claide-exception",
     "LoadError - dlopen(/Library/Ruby/Gems/2.6.0/gems/ffi-1.13.1/lib/ffi_c.bundle, 0x0009): "
     "missing compatible arch",
     "LoadError - dlopen(/Users/bo/.gem/ruby/2.6.0/gems/ffi-1.15.0/lib/ffi_c.bundle, 0x0009): "
     "missing compatible arch",
     "NoMethodError - undefined method `each' for nil:NilClass"),
    ("rails-error",
     "ActiveRecord::PendingMigrationError: Migrations are pending. To resolve this issue, run: "
     "bin/rails db:migrate RAILS_ENV=development",
     "web_1  | ActiveRecord::PendingMigrationError: Migrations are pending. To resolve this "
     "issue, run: bin/rails db:migrate RAILS_ENV=development",
     "ActiveRecord::ConnectionNotEstablished: No connection pool for 'ActiveRecord::Base' found."),
    ("ruby-exception-tail",
     "$ bundle exec rails s\n`Error loading the 'sqlite3' Active Record adapter. Missing a gem it "
     "depends on? (LoadError)",
     "rails db:migrate\nError loading the 'sqlite3' Active Record adapter. Missing a gem it "
     "depends on? (LoadError)`.",
     "rails db:migrate\nError loading the 'pg' Active Record adapter. Missing a gem it "
     "depends on? (LoadError)"),
    ("cocoapods-error",
     "[!] CocoaPods could not find compatible versions for pod \"Firebase/Core\":\n"
     "  In Podfile:\n    Firebase/Core (~> 6.0)",
     "Analyzing dependencies\n[!] CocoaPods could not find compatible versions for pod "
     "\"Firebase/Core\":\n  In Podfile:\n    Firebase/Core (~> 7.1)",
     "[!] Unable to find a specification for `FooKit`"),
    ("vagrantfile-load",
     "Vagrant failed to initialize at a very early stage:\n\nThere was an error loading a "
     "Vagrantfile. The file being loaded\nand the error message are shown below.\n\n"
     "Path: /home/ann/proj/Vagrantfile\nLine number: 62\n"
     "Message: NoMethodError: undefined method `exists?' for class File",
     "There was an error loading a Vagrantfile. The file being loaded\nand the error message "
     "are shown below.\n\nPath: /Users/bo/vm/Vagrantfile\nLine number: 7\n"
     "Message: NoMethodError: undefined method `exists?' for class File",
     "There was an error loading a Vagrantfile.\n\nPath: /home/ann/proj/Vagrantfile\n"
     "Line number: 3\nMessage: NameError: uninitialized constant VagrantPlugins"),
    ("dotnet-framework-missing",
     "It was not possible to find any compatible framework version\nThe framework "
     "'Microsoft.AspNetCore.App', version '3.0.0' was not found.",
     "The framework 'Microsoft.AspNetCore.App', version '3.1.0' (x64) was not found.",
     "The framework 'Microsoft.NETCore.App', version '6.0.0' (arm64) was not found."),
    ("dotnet-command-not-found",
     "Could not execute because the specified command or file was not found.\nPossible reasons "
     "for this include:\n  * You misspelled a built-in dotnet command.\n  * You intended to "
     "execute a .NET Core program, but dotnet-ef does not exist.",
     "Could not execute because the specified command or file was not found.\nPossible reasons "
     "for this include:\n  * You misspelled a built-in dotnet command.\n  * You intended to "
     "execute a .NET program, but dotnet-ef does not exist.",
     "Could not execute because the specified command or file was not found.\n  * You intended "
     "to execute a .NET program, but dotnet-format does not exist."),
    ("dotnet-icu-missing",
     "Process terminated. Couldn't find a valid ICU package installed on the system. Please "
     "install libicu using your package manager and try again.",
     "FailFast:\nCouldn't find a valid ICU package installed on the system. Set the "
     "configuration flag System.Globalization.Invariant to true.",
     "A fatal error occurred. The required library libhostfxr.so could not be found.\n"
     "Error\tNETSDK1004\tAssets file 'obj/project.assets.json' not found.\tApp"),
    ("dotnet-error-list",
     "Error\tNETSDK1045\tThe current .NET SDK does not support targeting .NET 6.0.\twasm\t"
     "C:\\Program Files\\dotnet\\sdk\\5.0.302\\Sdks\\x.targets\t141\t",
     "Severity\tCode\tDescription\tProject\nError\tNETSDK1045\tThe current .NET SDK does not "
     "support targeting .NET 6.0.\tApi\tD:\\sdk\\5.0.400\\x.targets\t141",
     "Error\tCS0246\tThe type or namespace name 'Foo' could not be found\tApi\tProgram.cs\t3"),
    ("efcore-design-time",
     "Unable to create an object of type 'ApplicationDbContext'. For the different patterns "
     "supported at design time, see https://go.microsoft.com/fwlink/?linkid=851728",
     "Unable to create an object of type 'ShopContext'. For the different patterns supported "
     "at design time, see https://go.microsoft.com/fwlink/?linkid=851728",
     "Your startup project 'Web' doesn't reference Microsoft.EntityFrameworkCore.Design."),
    ("efcore-design-package",
     "Build succeeded.\nYour startup project 'Pizza.Server' doesn't reference "
     "Microsoft.EntityFrameworkCore.Design. This package is required for the tools.",
     "Your startup project 'WebApi' doesn't reference Microsoft.EntityFrameworkCore.Design.",
     "No database provider has been configured for this DbContext."),
    ("efcore-model",
     "The entity type 'Order' requires a primary key to be defined.",
     "The entity type 'Invoice' requires a primary key to be defined. If you intended to use "
     "a keyless entity type, call 'HasNoKey'.",
     "More than one DbContext was found. Specify which one to use."),
    ("python-qualified-exception",
     "django.core.exceptions.ImproperlyConfigured: SQLite 3.8.3 or later is required "
     "(found 3.7.17).",
     "  web_1 | django.core.exceptions.ImproperlyConfigured: SQLite 3.8.3 or later is required "
     "(found 3.7.3).",
     "django.core.exceptions.ImproperlyConfigured: The SECRET_KEY setting must not be empty."),
    ("mysql-driver-code",
     "Error: ER_ACCESS_DENIED_ERROR: Access denied for user 'app'@'172.18.0.3' (using password: YES)",
     "connection error! ER_ACCESS_DENIED_ERROR: Access denied for user 'shop'@'localhost' "
     "(using password: YES)",
     "Error: ER_NOT_SUPPORTED_AUTH_MODE: Client does not support authentication protocol "
     "requested by server; consider upgrading MySQL client"),
    ("mongodb-driver",
     "(node:12200) UnhandledPromiseRejectionWarning: MongoParseError: options usecreateindex "
     "are not supported",
     "connection error: MongoParseError: options usecreateindex are not supported",
     "MongoServerSelectionError: connect ECONNREFUSED 127.0.0.1:27017"),
    ("php-fatal",
     "PHP Fatal error:  Uncaught Error: Call to undefined function mysql_connect() in "
     "/var/www/html/index.php:3",
     "[01-Jan-2024 10:00:00 UTC] PHP Fatal error:  Uncaught Error: Call to undefined function "
     "mysql_connect() in /home/bo/site/db.php:41",
     "Fatal error: Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 "
     "bytes) in /var/www/vendor/autoload.php on line 12"),
    ("composer-unresolvable",
     "Your requirements could not be resolved to an installable set of packages.\n\n"
     "  Problem 1\n    - Root composer.json requires php ^8.1 but your php version (8.0.2) "
     "does not satisfy that requirement.",
     "Your requirements could not be resolved to an installable set of packages.\n"
     "  Problem 1\n    - Root composer.json requires php ^8.1 but your php version (8.0.30) "
     "does not satisfy that requirement.",
     "Your requirements could not be resolved to an installable set of packages.\n"
     "  Problem 1\n    - laravel/framework[v10.0.0] require ext-mbstring * -> it is missing "
     "from your system."),
    ("apache-syntax",
     "apache2[29815]: AH00526: Syntax error on line 15 of /etc/apache2/sites-enabled/a.conf:\n"
     "apache2[29815]: Invalid command 'RewriteEngine', perhaps misspelled or defined by a module "
     "not included in the server configuration",
     "AH00526: Syntax error on line 3 of /usr/local/apache2/conf/httpd.conf:\nInvalid command "
     "'RewriteEngine', perhaps misspelled or defined by a module not included in the server "
     "configuration",
     "AH00526: Syntax error on line 9 of /etc/httpd/conf.d/ssl.conf:\nSSLCertificateFile: file "
     "'/etc/ssl/a.crt' does not exist or is empty"),
    ("apache-error-log",
     "[Wed Apr 06 16:52:22.061673 2016] [core:alert] [pid 14506] [client 10.1.2.3:37465] "
     "/var/www/html/.htaccess: Invalid command 'RewriteEngine', perhaps misspelled",
     "[Mon Jan 01 09:00:00.000001 2024] [core:alert] [pid 7:tid 1401] [client 192.168.1.9:5123] "
     "/srv/site/public/.htaccess: Invalid command 'RewriteEngine', perhaps misspelled",
     "[Mon Jan 01 09:00:00.000001 2024] [core:alert] [pid 7] [client 192.168.1.9:5123] "
     "/srv/site/.htaccess: Invalid command 'Header', perhaps misspelled"),
    ("ssh-negotiate",
     "Unable to negotiate with 10.0.0.7 port 22: no matching host key type found. Their offer: "
     "ssh-rsa,ssh-dss",
     "Unable to negotiate with 192.168.1.20 port 2222: no matching host key type found. Their "
     "offer: ssh-rsa",
     "Unable to negotiate with 10.0.0.7 port 22: no matching key exchange method found."),
    ("ssh-connect",
     "ssh: connect to host git.example.com port 22: Connection refused",
     "ssh: connect to host 10.1.1.4 port 2222: Connection refused",
     "ssh: connect to host git.example.com port 22: Connection timed out"),
    ("ssh-resolve",
     "ssh: Could not resolve hostname build-01: Name or service not known",
     "ssh: Could not resolve hostname db.internal: Name or service not known",
     "ssh: Could not resolve hostname db.internal: Temporary failure in name resolution"),
    ("ssh-host-key",
     "Host key verification failed.",
     "Cloning into 'x'...\nHost key verification failed.\nfatal: Could not read from remote",
     "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @"),
    ("ssh-key-file",
     "Bad owner or permissions on /home/ann/.ssh/config",
     "$ git fetch\nBad owner or permissions on /Users/bo/.ssh/config\nfatal: Could not read",
     "@         WARNING: UNPROTECTED PRIVATE KEY FILE!          @"),
    ("systemd-not-booted",
     "System has not been booted with systemd as init system (PID 1). Can't operate.\n"
     "Failed to connect to bus: Host is down",
     "$ sudo systemctl start docker\nSystem has not been booted with systemd as init system "
     "(PID 1). Can't operate.",
     "Failed to connect to bus: No such file or directory"),
    ("systemd-bus",
     "Failed to connect to bus: No such file or directory",
     "$ systemctl --user status\nFailed to connect to bus: No such file or directory",
     "Failed to connect to bus: Permission denied"),
    ("systemd-unit-not-found",
     "Failed to start docker.service: Unit docker.service not found.",
     "Failed to restart docker.service: Unit docker.service not found.",
     "Failed to start nginx.service: Unit nginx.service not found."),
    ("ansible-task",
     "fatal: [web01]: FAILED! => {\"changed\": false, \"msg\": \"No package matching 'htop' "
     "is available\"}",
     "fatal: [10.0.3.12]: FAILED! => {\"changed\": false, \"msg\": \"No package matching "
     "'htop' is available\"}",
     "fatal: [web01]: FAILED! => {\"changed\": false, \"msg\": \"Destination /etc/app not "
     "writable\"}"),
    ("gcloud-error",
     "ERROR: (gcloud.container.clusters.get-credentials) ResponseError: code=404, message=Not "
     "found: projects/acme-prod/zones/us-central1-a/clusters/main.",
     "ERROR: (gcloud.container.clusters.get-credentials) ResponseError: code=404, message=Not "
     "found: projects/side-proj/zones/europe-west1-b/clusters/dev.",
     "ERROR: (gcloud.container.clusters.get-credentials) ResponseError: code=403, message="
     "Required \"container.clusters.get\" permission(s) for \"projects/acme-prod/zones/x\"."),
    ("gcp-permission",
     "denied: Permission \"artifactregistry.repositories.uploadArtifacts\" denied on resource "
     "\"projects/acme/locations/us-central1/repositories/web\" (or it may not exist)",
     "Permission \"artifactregistry.repositories.uploadArtifacts\" denied on resource "
     "\"projects/other/locations/europe-west1/repositories/docker\" (or it may not exist)",
     "Permission \"artifactregistry.repositories.downloadArtifacts\" denied on resource "
     "\"projects/acme/locations/us-central1/repositories/web\" (or it may not exist)"),
    ("klog",
     "Apr 05 05:33:40 master kubelet[4759]: F0405 05:33:40.511159    4759 server.go:274] "
     "failed to run Kubelet: misconfiguration: kubelet cgroup driver: \"cgroupfs\" is "
     "different from docker cgroup driver: \"systemd\"",
     "Jan 03 01:49:48 node-2 kubelet[30646]: F0103 01:49:48.100000   30646 server.go:266] "
     "failed to run Kubelet: misconfiguration: kubelet cgroup driver: \"cgroupfs\" is "
     "different from docker cgroup driver: \"systemd\"",
     "Jan 03 01:49:48 node-2 kubelet[30646]: E0103 01:49:48.100000   30646 run.go:74] "
     "\"command failed\" err=\"failed to load kubelet config file\""),
    ("compose-external-network",
     "network global declared as external, but could not be found",
     "# docker compose up -d\nnetwork proxy_default declared as external, but could not be found",
     "ERROR: The Compose file './docker-compose.yml' is invalid because:\nUnsupported config "
     "option for services.web: 'volume'"),
    ("docker-unknown-command",
     "docker compose up\ndocker: 'compose' is not a docker command.\nSee 'docker --help'",
     "$ sudo docker compose version\ndocker: 'compose' is not a docker command.",
     "docker: 'buildx' is not a docker command."),
    ("compose-invalid-file",
     "ERROR: The Compose file './docker-compose.yml' is invalid because:\nUnsupported config "
     "option for services.web: 'volume'",
     "The Compose file '/srv/app/docker-compose.yml' is invalid because:\nUnsupported config "
     "option for services.web: 'volume'",
     "ERROR: The Compose file './docker-compose.yml' is invalid because:\nservices.db.ports "
     "contains an invalid type, it should be an array"),
    ("sanitizer-report",
     "==12345==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc "
     "0x4c8b2d bp 0x7ffd sp 0x7ffd\nREAD of size 4 at 0x602000000010 thread T0\n"
     "    #0 0x4c8b2d in main /home/ann/src/test.c:7:12\n"
     "    #1 0x7f1 in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x21b96)\n\n"
     "SUMMARY: AddressSanitizer: heap-use-after-free /home/ann/src/test.c:7:12 in main",
     "==881==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020000000f0 at pc "
     "0x55d1 bp 0x7fff sp 0x7fff\nREAD of size 4 at 0x6020000000f0 thread T0\n"
     "    #0 0x55d1 in main /builds/ci/src/test.c:8:12\n"
     "    #1 0x7f9 in __libc_start_main (/usr/lib/libc.so.6+0x2d0)\n",
     "==12345==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000014 at pc "
     "0x4c8b2d bp 0x7ffd sp 0x7ffd\nWRITE of size 4 at 0x602000000014 thread T0\n"
     "    #0 0x4c8b2d in main /home/ann/src/test.c:7:12\n"),
    ("sanitizer-runtime",
     "==17587==ASan runtime does not come first in initial library list; you should either "
     "link runtime to your application or manually preload it with LD_PRELOAD.",
     "==24101==ASan runtime does not come first in initial library list; you should either "
     "link runtime to your application or manually preload it with LD_PRELOAD.==24101==ASan",
     "==5==AddressSanitizer: failed to intercept 'malloc'"),
    ("ubsan-runtime-error",
     "src/add.c:4:14: runtime error: signed integer overflow: 2147483647 + 1 cannot be "
     "represented in type 'int'",
     "/home/ci/proj/src/add.c:4:14: runtime error: signed integer overflow: 2147483647 + 1 "
     "cannot be represented in type 'int'",
     "src/shift.c:9:3: runtime error: shift exponent 32 is too large for 32-bit type 'int'"),
    ("valgrind-error",
     "==32421== Invalid read of size 4\n==32421==    at 0x108671: main (test.c:7)\n"
     "==32421==  Address 0x522d040 is 0 bytes inside a block of size 4 free'd",
     "==77== Invalid read of size 4\n==77==    at 0x4005F1: main (test.c:9)\n"
     "==77==  Address 0x51f1040 is 0 bytes inside a block of size 4 free'd",
     "==32421== Invalid write of size 4\n==32421==    at 0x108671: main (test.c:7)\n"),
    ("valgrind-startup",
     "valgrind:  Fatal error at startup: a function redirection\nvalgrind:  which is mandatory "
     "for this platform-tool combination\nvalgrind:  whose name matches the pattern:      "
     "strlen\nvalgrind:  in an object with soname matching:   ld-linux-x86-64.so.2",
     "==100330== Memcheck, a memory error detector\nvalgrind:  Fatal error at startup: a "
     "function redirection\nvalgrind:  whose name matches the pattern:      strlen\n"
     "valgrind:  in an object with soname matching:   ld-linux-x86-64.so.2",
     "valgrind:  Fatal error at startup: a function redirection\nvalgrind:  whose name "
     "matches the pattern:      index\nvalgrind:  in an object with soname matching:   "
     "ld-linux.so.3"),
    ("jest-test-failed",
     "  ● Calculator › adds two numbers\n\n    expect(received).toBe(expected) // Object.is "
     "equality\n\n    Expected: 3\n    Received: 4",
     "FAIL src/calc.test.js\n  ● Calculator › adds two numbers\n\n    expect(received).toBe("
     "expected) // Object.is equality\n\n    Expected: 3\n    Received: 5",
     "  ● Calculator › adds two numbers\n\n    TypeError: add is not a function"),
    ("jest-resolve",
     "    Cannot find module '@app/constants' from 'src/actions/index.ts'\n\n      at "
     "Resolver.resolveModule (node_modules/jest-resolve/build/index.js:151:17)",
     "Cannot find module '@app/constants' from 'index.ts'",
     "Cannot find module 'react-native-config' from 'src/env.ts'"),
    ("esbuild-platform",
     "You installed esbuild for another platform than the one you're currently using.\nThis "
     "won't work because esbuild is written with native code.",
     "Error:\nYou installed esbuild for another platform than the one you're currently using.",
     "Error: Host version \"0.14.2\" does not match binary version \"0.15.5\""),
    ("yarn-engine",
     "error music-pwa@1.0.0: The engine \"node\" is incompatible with this module. Expected "
     "version \"11.12.x\". Got \"15.4.0\"\nerror Found incompatible module.",
     "error shop-web@2.3.1: The engine \"node\" is incompatible with this module. Expected "
     "version \">=18\". Got \"16.20.0\"",
     "error shop-web@2.3.1: The engine \"yarn\" is incompatible with this module. Expected "
     "version \"^3\". Got \"1.22.19\""),
    ("react-native-invariant",
     " ERROR  Invariant Violation: requireNativeComponent: \"RNSScreen\" was not found in the "
     "UIManager.\n\nThis error is located at:",
     "Invariant Violation: requireNativeComponent: \"RNSScreen\" was not found in the UIManager.",
     "Invariant Violation: \"main\" has not been registered."),
    ("metro-unresolved-module",
     "error: Error: Unable to resolve module ./Foo from /home/ann/app/App.js:",
     "Unable to resolve module ./Foo from C:\\app\\src\\App.js: Foo could not be found",
     "error: Error: Unable to resolve module react-native-svg from /home/ann/app/App.js:"),
    ("android-aapt",
     "C:\\Users\\x\\.gradle\\caches\\core-1.7.0\\res\\values\\values.xml:105:5-114:25: AAPT: "
     "error: resource android:attr/lStar not found.",
     "/home/ci/.gradle/caches/core-1.7.0/res/values/values.xml:105:5-114:25: AAPT: error: "
     "resource android:attr/lStar not found.",
     "/home/ci/app/src/main/res/layout/main.xml:12: AAPT: error: attribute android:foo not found."),
    ("kotlin-diagnostic",
     "e: /home/ann/.gradle/caches/a.jar!/META-INF/a.kotlin_module: Incompatible classes were "
     "found in dependencies. Remove them from the classpath",
     "e: C:/Users/bo/.m2/b.jar!/META-INF/b.kotlin_module: Incompatible classes were found in "
     "dependencies. Remove them from the classpath",
     "e: /home/ann/app/build.gradle.kts: Script compilation errors"),
    ("go-test-fail",
     "=== RUN   TestAdd\n--- FAIL: TestAdd (0.00s)\n    add_test.go:12: Add(1, 2) = 4; want 3\n"
     "FAIL\nFAIL\texample.com/calc\t0.002s",
     "--- FAIL: TestAdd (0.01s)\n    add_test.go:14: Add(1, 2) = 4; want 3\nFAIL",
     "--- FAIL: TestAdd (0.00s)\n    add_test.go:12: Add(2, 2) = 5; want 4\nFAIL"),
    ("sqlstate",
     "#0 /app/src/Statement.php:82 PDOException(\"SQLSTATE[42S02]: Base table or view not "
     "found: 1146 Table 'shop.users' doesn't exist\")",
     "SQLSTATE[42S02]: Base table or view not found: 1146 Table 'shop.users' doesn't exist "
     "(SQL: select * from `users`)",
     "SQLSTATE[HY000] [2002] Connection refused (SQL: select 1)"),
    ("go-command",
     "go test: -race requires cgo; enable cgo by setting CGO_ENABLED=1",
     "$ go build -race ./...\ngo build: -race requires cgo; enable cgo by setting CGO_ENABLED=1",
     "go: go.mod file not found in current directory or any parent directory"),
    ("kotlin-incompatible-module",
     "e: /home/ann/.gradle/caches/a.jar!/META-INF/a_release.kotlin_module: Module was compiled "
     "with an incompatible version of Kotlin. The binary version of its metadata is 1.9.0, "
     "expected version is 1.7.1.",
     "Module was compiled with an incompatible version of Kotlin. The binary version of its "
     "metadata is 1.6.0, expected version is 1.4.0.",
     "e: /home/ann/app/build.gradle.kts: Script compilation errors"),
    ("yarn-usage-error",
     "Usage Error: The project in /home/ann/app/package.json doesn't seem to have been "
     "installed - running an install there might help",
     "Usage Error: The project in D:\\work\\site\\package.json doesn't seem to have been "
     "installed - running an install there might help",
     "Usage Error: This tool requires a Node version compatible with >=18.12.0"),
    ("cypress-dependency",
     "Your system is missing the dependency: Xvfb\n\nInstall Xvfb and run Cypress again.",
     "Run npx cypress run\nYour system is missing the dependency: Xvfb",
     "Your system is missing the dependency: libgbm"),
    ("adb-install-failed",
     "Failed to finalize session : INSTALL_FAILED_NO_MATCHING_ABIS: Failed to extract native "
     "libraries, res=-113",
     "adb: failed to install app-debug.apk: Failure [INSTALL_FAILED_NO_MATCHING_ABIS: Failed to "
     "extract native libraries, res=-113]",
     "Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Package com.acme.app signatures do not match]"),
    ("android-emulator-acceleration",
     "emulator: ERROR: x86_64 emulation currently requires hardware acceleration!",
     "ERROR: x86_64 emulation currently requires hardware acceleration!\nCPU acceleration status",
     "emulator: ERROR: x86 emulation currently requires hardware acceleration!"),
    ("swiftpm-tools-version",
     "contacts: error: package at '/Users/ann/contacts' is using Swift tools version 5.9.0 but "
     "the installed version is 5.7.1",
     "error: package at '/home/ci/work/contacts' is using Swift tools version 5.9.0 but the "
     "installed version is 5.8.0",
     "Sources/App/main.swift:3:5: error: cannot find 'foo' in scope"),
    ("pytest-error-line",
     "    def test_total(self):\n        if cart.total() > 0:\n>           assert cart.total() == 3\n"
     "E                   TypeError: unsupported operand type(s) for +: 'int' and 'str'\n",
     "def test_total():\n>   assert cart.total() == 3\n"
     "E   TypeError: unsupported operand type(s) for +: 'int' and 'str'\n",
     "    def test_total(self):\nE                   KeyError: 'price'\n"),
    ("pip-no-such-option",
     "Usage:\n  pip install [options] <requirement specifier> ...\n\nno such option: --build-option",
     "Usage:   \n  pip3 install [options] -r <requirements file> ...\n\nno such option: --build-option\n",
     "no such option: --global-option"),
    ("aws-sdk-error",
     "==> amazon-ebs.web: InvalidAMIID.NotFound: The image id '[ami-0a1b]' does not exist\n"
     "==> amazon-ebs.web: \tstatus code: 400, request id: 2f0c5e1a-aaaa-4bbb-8ccc-123456789abc",
     "Error: Build 'amazon-ebs.base' errored after 2 seconds: InvalidAMIID.NotFound: The image id "
     "'[ami-0a1b]' does not exist\n\tstatus code: 400, request id: 77aa0c1e-0000-4111-8222-abcdefabcdef",
     "UnauthorizedOperation: You are not authorized to perform this operation.\n"
     "\tstatus code: 403, request id: 0d9f1e2a-1234-4567-89ab-cdef01234567"),
    ("redis-error-reply",
     "Redis::CommandError - WRONGTYPE Operation against a key holding the wrong kind of value:",
     "ReplyError: WRONGTYPE Operation against a key holding the wrong kind of value",
     "ReplyError: NOAUTH Authentication required."),
]


def _root(text: str):
    sigs = extract(text)
    assert sigs, text
    return sigs[0]


@pytest.mark.parametrize("rule,a,b,other", ROWS, ids=[r[0] for r in ROWS])
def test_rule_reads_one_failure_alike_on_two_machines(rule, a, b, other):
    first, second = _root(a), _root(b)
    assert (first.rule, second.rule) == (rule, rule)
    assert not first.loose and first.sig_sha == second.sig_sha, (first.text, second.text)


@pytest.mark.parametrize("rule,a,b,other", ROWS, ids=[r[0] for r in ROWS])
def test_rule_keeps_another_failure_of_the_tool_apart(rule, a, b, other):
    first, third = _root(a), _root(other)
    assert not third.loose
    assert first.sig_sha != third.sig_sha and first.message != third.message, third.text



def test_a_line_pasted_as_inline_code_reads_as_the_line():
    bare = _root("java.sql.SQLException: Access denied for user (using password: YES)")
    quoted = _root("`java.sql.SQLException: Access denied for user (using password: YES)`")
    assert quoted.sig_sha == bare.sig_sha


def test_python_logging_level_and_logger_are_not_the_message():
    one = _root("ERROR [alembic.util.messaging] Target database is not up to date.")
    two = _root("INFO  [alembic.runtime.migration] Context impl SQLiteImpl.\n"
                "ERROR [alembic.env] Target database is not up to date.")
    assert one.sig_sha == two.sig_sha and "alembic" not in one.message


def test_ssh_load_key_headline_stays_loose():
    """`Load key: invalid format` has several causes (passphrase, wrong file) and nothing
    below it says which: no strong key."""
    sigs = extract('Load key "/home/ann/.ssh/id_rsa": invalid format')
    assert sigs and all(s.loose for s in sigs)


def test_go_test_failure_whose_report_is_elsewhere_yields_to_a_reported_one():
    """A parent test's FAIL line (report in its subtest) is weak: the subtest's reported
    failure is the signature."""
    sigs = extract("--- FAIL: TestAdd (0.00s)\n    --- FAIL: TestAdd/neg (0.00s)\n"
                   "        add_test.go:30: Add(-1, 1) = 2; want 0")
    assert [s.message for s in sigs] == ["TestAdd/neg: Add(-1, 1) = 2; want 0"]


def test_fastlane_bang_lines_are_not_read_as_cocoapods():
    sig = extract("[12:00:01]: Driving the lane 'android deploy'\n[!] Google Api Error: Invalid "
                  "request - Version code 412 has already been used.\nfastlane finished with errors")[0]
    assert (sig.rule, sig.tool) == ("cocoapods-error", "fastlane")


def test_a_suffixed_qualified_exception_stays_with_bare_exception():
    """Only names without an Error/Exception suffix are new here; the others keep the
    bare-exception reading (and its frames and continuation lines)."""
    sig = extract("billiard.exceptions.WorkerLostError: Worker exited prematurely: signal 9")[0]
    assert sig.rule == "bare-exception"
