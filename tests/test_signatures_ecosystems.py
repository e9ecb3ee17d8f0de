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
