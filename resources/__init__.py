"""Static resources: icons, prompt templates, stylesheets."""
